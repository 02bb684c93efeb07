import logging
import pickle

from sklearn.feature_extraction.text import CountVectorizer
from sklearn.neural_network import MLPClassifier
