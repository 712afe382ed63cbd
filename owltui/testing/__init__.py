"""Public test doubles for tests, benches and anyone embedding OwlTUI: a scripted model and a bare
agent host. Imported by no product module."""
