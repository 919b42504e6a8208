"""The version sweep's files: its folders, logs, cells, tables, explanations and the corpus's score."""
