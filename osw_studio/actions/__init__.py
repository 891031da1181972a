"""Action parsers (pyautogui code, computer_13 JSON, UI-TARS text), code generators and coordinate spaces."""
