# placeholder: the host helper writes the agent
