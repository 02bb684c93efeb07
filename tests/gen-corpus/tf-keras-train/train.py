import keras
import tensorflow as tf

model = keras.Sequential([keras.layers.Dense(10)])
