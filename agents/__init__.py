"""lateralgym.agents"""
