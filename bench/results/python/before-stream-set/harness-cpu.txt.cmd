build-device/cli/gatecheck bench --harness --device cpu --impl torch-eager --impl python:gatecheck.peers:diffusers_eager --seconds-per-property 2 --jobs 1 --json /tmp/res/python/harness-cpu.json
