"""Result files on disk: their folders and names (`layout`), the machine each records, one walk over a folder
(`reading`), its index, atomic writes (`writing`) and the documents as DataFrames (`frames`)."""
