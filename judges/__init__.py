"""lateralgym.judges"""
