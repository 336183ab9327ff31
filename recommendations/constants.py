"""Names and limits of recommendations used in more than one module."""

# Celery task names (stable: queued messages and beat rows carry them).
PREDICT_POLICY_TASK = "allocation.tasks.predict_policy"
EXPIRE_RECOMMENDATIONS_TASK = "allocation.tasks.expire_recommendations"
