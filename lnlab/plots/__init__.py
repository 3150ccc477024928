"""Plotly figure builders: plain functions from numbers to figures, tested without Streamlit."""
