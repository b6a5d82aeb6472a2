from corral.orchestrator.cli import console

console()
