"""How data reaches the step: datasets, loaders, the compiled step and each pipeline's epoch. This file imports nothing:
spawned DataLoader workers must stay JAX-free."""
