"""Reports: the results' sections computed as data (`sections`), drawn (`plots`) and rendered (`html`,
`markdown`, and `text` for the terminal), written into a new folder (`write`).

This file imports nothing: `import jaxmlp.report` pulls in neither pandas nor matplotlib.
"""
