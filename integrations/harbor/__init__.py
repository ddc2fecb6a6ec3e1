"""nodwyn as an installed agent of Harbor: nodwyn_agent.Nodwyn (docs/harbor.md)."""
