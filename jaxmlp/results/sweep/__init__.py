"""The version sweep's files: a sweep's folder and log (`files`), its cells (`cells`), what its folders say
(`folders`), its tables, the explanation of two releases (`explain`, `explain_files`) and the corpus's score."""
