"""Background job workers: procrastinate workers in their own processes run evaluations and analyses."""
