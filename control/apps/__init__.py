"""Controller apps: each one job, driven by a `Switch`."""
