"""Run store reading and exporters to training and evaluation formats."""
