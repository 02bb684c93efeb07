import streamlit as st

st.title("Metrics")
