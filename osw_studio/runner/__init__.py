"""The episode state machine with human controls, the batch scheduler and the run store writer."""
