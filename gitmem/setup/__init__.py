"""Making memory repos: init, adopt an existing repo, clone."""
