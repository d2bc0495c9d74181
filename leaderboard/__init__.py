"""Crucible's leaderboard: a Streamlit app (``streamlit run leaderboard/app.py``) and the figure
command (``python -m leaderboard.figures``) over the run files in ``results/``. Never imports torch."""
