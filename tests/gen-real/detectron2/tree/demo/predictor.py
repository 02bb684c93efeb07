# VisualizationDemo
