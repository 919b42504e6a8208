"""Reports: the results' sections as data, drawn, rendered and written into a new folder. Imports nothing heavy."""
