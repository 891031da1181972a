"""Task loading, validation and the task library."""

from osw_studio.tasks.library import TaskLibrary
from osw_studio.tasks.load import LoadReport, TaskEntry, load_task, load_tasks

__all__ = ["LoadReport", "TaskEntry", "TaskLibrary", "load_task", "load_tasks"]
