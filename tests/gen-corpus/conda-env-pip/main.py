import sklearn
