"""Model judges: a local model or a team's own command grades the pooled candidates.

Not the people who judge on the Label screen (that is the labeling session). ``run``
runs a judge and stores its grades, ``command`` speaks to a team's judge command,
``calibration`` turns a model's scores into grades, ``circular`` finds a judge built on a
pooled retriever's own model, ``report`` says whether its grades can stand in for people's.
"""
