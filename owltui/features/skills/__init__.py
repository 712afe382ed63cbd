"""Agent Skills: ``SKILL.md`` folders found in the project and the user's directories, offered to the
model as a catalog in the system prompt and activated by the user with ``/skill NAME``."""
