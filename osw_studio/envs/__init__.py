"""Envs: host-side handles on guests, the providers that create them, and the setup-step executor."""
