"""Internal: what an agent's transcript says it consulted, cited and wrote."""
