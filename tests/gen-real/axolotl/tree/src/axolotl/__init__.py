"""Axolotl - Train and fine-tune large language models"""
