"""How people's judging is spent: the order of candidates, when to stop, what to judge next.

``settings`` holds a workspace's order and stopping rule, ``order`` the candidate order,
``stopping`` when a question may stop and what a stop leaves, ``queue`` which question
needs judging most, ``feedback`` gold beyond the pool.
"""
