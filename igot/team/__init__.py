"""The team server (`igot serve --team`): one library shared by a team that signs in."""
