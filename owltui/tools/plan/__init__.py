"""Planning tools: ``todo`` (the model's checklist) and ``exit_plan`` (plan mode: the model presents
its plan for the user to accept, refine or reject)."""
