# `make deploy-check` (included by the Makefile where deploy/check/ is; a project without it has no such target)
# podman-compose in a venv of its own; podman, runc and debootstrap from Debian (crun fails on hybrid cgroups).
DEPLOY_STAMP := .venv-deploy/.installed
.PHONY: deploy-check deploy-tools

$(DEPLOY_STAMP): deploy/check/requirements.txt
	$(PYTHON) -m venv .venv-deploy
	.venv-deploy/bin/python -m pip install --quiet -r deploy/check/requirements.txt
	touch $@

deploy-tools:
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v debootstrap >/dev/null || { \
		$(SUDO) apt-get -o DPkg::Lock::Timeout=120 update && \
		$(SUDO) apt-get -o DPkg::Lock::Timeout=120 install -y podman runc debootstrap; }

deploy-check: $(STAMP) $(DEPLOY_STAMP) deploy-tools ## Build the compose stack (podman), approve across, kill, upgrade, remove it (root)
	$(SUDO) $(BIN)/python -m deploy.check --compose .venv-deploy/bin/podman-compose
