"""Model flow: what a function does with models (captures, modes, sinks) and which callables it reaches."""
