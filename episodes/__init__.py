"""lateralgym.episodes"""
