"""Getters: fetch the values a metric compares, from the guest, the task file or the asset cache."""
