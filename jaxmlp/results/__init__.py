"""The results layer: every result jaxmlp writes or reads goes through it. ``import jaxmlp.results`` imports nothing
else (the noxfile uses `store.layout`)."""
