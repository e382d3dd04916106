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
def roc_auc_score(y_true, y_score):
    """unseen20i: Deep-SVDD's trainers; the rank (Mann-Whitney) form of the binary ROC AUC, ties averaged."""
    y_true, y_score = np.asarray(y_true), np.asarray(y_score, dtype=float)
    pos, neg = y_score[y_true == 1], y_score[y_true != 1]
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("Only one class present in y_true. ROC AUC score is not defined in that case.")
    gt = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(gt) / (len(pos) * len(neg))


def _binary_counts(y_true, y_pred, pos_label=1):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    tp = int(((y_pred == pos_label) & (y_true == pos_label)).sum())
    fp = int(((y_pred == pos_label) & (y_true != pos_label)).sum())
    fn = int(((y_pred != pos_label) & (y_true == pos_label)).sum())
    return tp, fp, fn


def precision_score(y_true, y_pred, average="binary", pos_label=1, zero_division=0, **k):
    """unseen20m: binary precision (pneumonia_classification's test_model)."""
    tp, fp, _ = _binary_counts(y_true, y_pred, pos_label)
    return tp / (tp + fp) if tp + fp else float(zero_division)


def recall_score(y_true, y_pred, average="binary", pos_label=1, zero_division=0, **k):
    """unseen20m: binary recall."""
    tp, _, fn = _binary_counts(y_true, y_pred, pos_label)
    return tp / (tp + fn) if tp + fn else float(zero_division)


def f1_score(y_true, y_pred, average="binary", pos_label=1, zero_division=0, **k):
    """unseen20m: binary F1."""
    p, r = precision_score(y_true, y_pred, pos_label=pos_label), recall_score(y_true, y_pred, pos_label=pos_label)
    return 2 * p * r / (p + r) if p + r else float(zero_division)


def average_precision_score(y_true, y_score, *a, **k):
    """unseen20r: import-only use (MIR_sample_cnn src/models/misc.py AUCMetric, not reached in training): a plain
    average precision over one label vector."""
    import numpy as _np
    y_true, y_score = _np.asarray(y_true).ravel(), _np.asarray(y_score).ravel()
    o = _np.argsort(-y_score); t = y_true[o]
    hits = _np.cumsum(t); prec = hits / (_np.arange(len(t)) + 1)
    return float((prec * t).sum() / max(t.sum(), 1))


def balanced_accuracy_score(y_true, y_pred, *a, **k):
    """unseen20t: the mean per-class recall over the classes present in y_true (dgcnn main.py)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    cls = np.unique(y_true)
    return float(np.mean([(y_pred[y_true == c] == c).mean() for c in cls])) if len(cls) else 0.0
