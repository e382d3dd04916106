import numpy as np
def accuracy_score(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float((y_true == y_pred).mean()) if len(y_true) else 0.0
def classification_report(y_true, y_pred, target_names=None, digits=2):
    return "report of %d rows (stand-in)" % len(np.asarray(y_true))
def confusion_matrix(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    n = int(max(y_true.max(initial=0), y_pred.max(initial=0))) + 1
    m = np.zeros((n, n), dtype=int)
    for t, p in zip(y_true, y_pred): m[t, p] += 1
    return m
