"""Result files on disk: names (`layout`), reading a folder (`reading`), its index, atomic writes and DataFrames."""
