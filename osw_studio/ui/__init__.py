"""Qt views of OSW Studio's core objects.

Each view takes the core object it shows (an :class:`~osw_studio.runner.episode.Episode`, a
:class:`~osw_studio.tasks.TaskLibrary`, settings) and subscribes to its psygnal signals; views change
state only by calling core methods. Qt is imported here and in :mod:`osw_studio.app`, nowhere else.
"""
