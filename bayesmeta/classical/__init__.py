"""Classical (closed-form and resampling) estimators. NumPy, SciPy, pandas and xarray only."""
