"""Result files on disk: their names (`layout`), reading a folder (`reading`), its index, atomic writes and
DataFrames."""
