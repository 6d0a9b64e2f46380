"""What every stage runs on: devices, the model hub, bundled models, safe file writes."""
