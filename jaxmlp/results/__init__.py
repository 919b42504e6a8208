"""The results layer: every result jaxmlp writes or reads goes through it (`schema`, `store`, `tables`, `sweep`,
`history`, `findings`).

``import jaxmlp.results`` imports nothing else: `store.layout` is plain Python (the noxfile uses it)."""
