"""Integrations of nodwyn with other tools (see integrations/harbor)."""
