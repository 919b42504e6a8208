"""Reports: the results' sections computed as data, drawn, rendered (HTML, Markdown, terminal text) and written into a
new folder. Importing this package pulls in neither pandas nor matplotlib."""
