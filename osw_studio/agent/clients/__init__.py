"""Model clients of the vendors' own computer-use APIs (the chat completions client is ``model_client``)."""
