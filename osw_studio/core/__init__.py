"""Plain models shared by every layer: tasks, actions, observations, steps and errors.

Nothing here does I/O or imports Qt; every other package speaks these types.
"""
