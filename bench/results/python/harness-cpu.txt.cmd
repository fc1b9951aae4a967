build-device/cli/gatecheck bench --harness --device cpu --impl torch-eager --impl python:gatecheck.peers:diffusers_eager --cases-per-property 600 --jobs 1 --json /tmp/res/python/harness-cpu.json
