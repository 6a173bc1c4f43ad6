"""The agent on the Claude API: the session loop, chat, prompt layout, tools, tokens and usage."""
