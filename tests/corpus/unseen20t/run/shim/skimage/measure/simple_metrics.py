"""unseen20t: compare_psnr as scikit-image < 0.16 computed it: 10 * log10(data_range ** 2 / MSE)."""
import numpy as np


def compare_psnr(im_true, im_test, data_range=None):
    im_true, im_test = np.asarray(im_true, dtype=np.float64), np.asarray(im_test, dtype=np.float64)
    if data_range is None:
        data_range = 1.0 if im_true.max() <= 1.0 else 255.0
    mse = np.mean((im_true - im_test) ** 2)
    return 10 * np.log10((data_range ** 2) / mse)
